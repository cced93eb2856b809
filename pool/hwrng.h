/* hwrng.h - every hardware RNG the kernel's hw_random core shows, read from
 * sysfs (/sys/class/misc/hw_random), and which of them is a TPM's.
 *
 * What the kernel offers there, and what it does not:
 *   rng_available  every registered device, by name, space-separated (newer
 *                  kernels end the list with "none", the choice of no
 *                  device: it is not a device and is not listed here)
 *   rng_current    the one device /dev/hwrng reads, "none" when none
 *   rng_quality    entropy per 1024 bits the kernel credits the CURRENT
 *                  device with (recent kernels, Debian 12's 6.1 among them;
 *                  absent on older ones). The quality of the other devices
 *                  is not offered anywhere: reading it would mean making
 *                  each one current.
 *   rng_selected   1 when user space chose rng_current, 0 when the kernel
 *                  did (by quality); absent on older kernels
 * /dev/hwrng is the only path to a device's bytes, and only to the current
 * one's. Writing rng_current is global: it changes what the kernel itself
 * feeds into its own pool; so this module only reads, never switches.
 *
 * A TPM registers its RNG as "tpm-rng-N", N the chip's number, the same N
 * as its /dev/tpmN and /dev/tpmrmN. Its rng_quality is not a claim about
 * the chip: TPM drivers set none, and what sysfs shows then comes from the
 * hw_random core's defaults (0 on Debian 12's 6.1, measured), for what is
 * a DRBG's output (docs/ENTROPY.md). The same bytes through the tpm source
 * and through /dev/hwrng must not be credited twice (SP 800-90B 3.1.6):
 * the helpers below let the sources tell.
 *
 * Pure file reading, no state, no logging; the sysfs directory is a
 * parameter so that tests point it at a tree of their own.
 * Flow: (status, and the hwrng/tpm sources' credit) -> [sysfs]. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Below a sysfs root ("/sys", or a test's tree). */
#define HWRNG_SYSFS_SUBDIR "/class/misc/hw_random"
#define HWRNG_SYSFS_DIR "/sys" HWRNG_SYSFS_SUBDIR
/* Devices kept in a listing; a longer rng_available is cut and says so. */
#define HWRNG_MAX_DEVICES 16U
/* A device name, NUL included; the kernel's are at most 63 bytes. */
#define HWRNG_NAME_MAX 64U

typedef struct HwrngDevice {
        char name[HWRNG_NAME_MAX];
        bool current;
        int tpm;                 /* the TPM's number N of "tpm-rng-N", else -1 */
} HwrngDevice;

typedef struct HwrngList {
        size_t n;
        HwrngDevice devices[HWRNG_MAX_DEVICES];
        bool truncated;          /* rng_available named more than HWRNG_MAX_DEVICES */
        char current[HWRNG_NAME_MAX]; /* rng_current, "" for "none" */
        int quality;             /* rng_quality of the current device, 0..1024;
                                  * -1 when the kernel offers none (older kernels),
                                  * when it is unreadable or malformed, or when no
                                  * device is current */
        int selected;            /* rng_selected: 1 user, 0 kernel, -1 not offered */
} HwrngList;

/* Reads the listing from dir (NULL: HWRNG_SYSFS_DIR). -ENOENT when the
 * directory or its rng_available is not there (no hw_random core), another
 * -errno when rng_available or rng_current cannot be read. *ret is written
 * on success only; missing optional attributes are -1 there, not errors. */
int hwrng_list_read(const char *dir, HwrngList *ret);

/* A TPM's number as the kernel writes it into its names ("tpm-rng-N",
 * "tpmN", "tpmrmN"): decimal digits only, no sign, no leading zero but in
 * "0", at most INT_MAX; the number, else -EINVAL. */
int tpm_number_parse(const char *s);

/* N when name is "tpm-rng-N" (tpm_number_parse), else -EINVAL. */
int hwrng_name_tpm_index(const char *name);

/* Whether rng_current in dir (NULL: HWRNG_SYSFS_DIR) is a TPM's RNG: the
 * TPM's number N (>= 0) when it is "tpm-rng-N", -ENODEV when another
 * device or none is current, another -errno when rng_current cannot be
 * read (-ENOENT: no hw_random core). A daemon that credits the tpm source
 * on TPM N asks this before it credits /dev/hwrng. */
int hwrng_current_tpm(const char *dir);

/* One sysfs attribute, newline stripped: 0, -E2BIG when it does not fit in
 * size - 1 bytes, or the -errno of open/read. */
int hwrng_read_attr(const char *dir, const char *name, char *ret, size_t size);
