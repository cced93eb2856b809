/* test-commands.c - every command of the control protocol is answered by
 * exactly one side: the socket's own handlers (daemon/control/commands.c)
 * or the daemon's table (daemon/commands.c). A row added in proto/ and
 * forgotten here, or served twice, shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/control/commands.h"
#include "daemon/daemon-internal.h"
#include "proto/ctlcommand.h"

static bool socket_serves(const char *name) {
        for (const ControlHandler *h = control_handlers; h->command; h++)
                if (strcmp(h->command, name) == 0)
                        return true;
        return false;
}

static void test_each_command_one_side(void **state) {
        size_t n = 0;

        for (const CtlCommand *c = ctl_commands; c->name; c++, n++) {
                bool s = socket_serves(c->name), d = daemon_command_served(c->name);

                if (s == d)
                        fail_msg("command %s is served by %s", c->name, s ? "both sides" : "neither side");
        }
        assert_true(n >= 3);
        assert_false(daemon_command_served("no-such-command"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_each_command_one_side),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
