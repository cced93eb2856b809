/* devices.c - the devices' rows (config.h's CONFIG_DEVICE_TABLE) as data:
 * what keys.c makes [device]'s keys from, checks.c compares names by,
 * config.c takes the defaults from, and the daemon serves; and the name of
 * a source's own device.
 * Flow: [the rows] -> config -> the daemon's CUSE devices. */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#define CONFIG_DEVICE_ROW_(ID, name_key_, name_, mode_key_, mode_, group_, dropin_)                          \
        [CONFIG_DEVICE_##ID] = { .name_key = name_key_, .default_name = name_, .mode_key = mode_key_,         \
                                 .default_mode = mode_, .group = group_, .dropin = dropin_ },
const ConfigDeviceRow config_devices[_CONFIG_DEVICE_MAX] = { CONFIG_DEVICE_TABLE(CONFIG_DEVICE_ROW_) };

const char *const config_privileged_names[_CONFIG_PRIVILEGED_MAX + 1] = {
        [CONFIG_PRIVILEGED_CAPABILITY] = "capability",
        [CONFIG_PRIVILEGED_HOST_ROOT] = "host-root",
        [CONFIG_PRIVILEGED_NONE] = "none",
        [_CONFIG_PRIVILEGED_MAX] = NULL,
};
#undef CONFIG_DEVICE_ROW_

int config_source_device_name(const Config *c, ConfigSource s, char ret[static CONFIG_DEVICE_NAME_MAX + 1]) {
        const DeviceConfig *trng = &c->device[CONFIG_DEVICE_TRNG];
        int n;

        if (!config_device_served(trng) || s >= _CONFIG_SOURCE_MAX)
                return -EINVAL;
        n = snprintf(ret, CONFIG_DEVICE_NAME_MAX + 1, "%s-%s", trng->name, source_all[s]->name);
        return n < 0 || n > CONFIG_DEVICE_NAME_MAX ? -ENAMETOOLONG : 0;
}
