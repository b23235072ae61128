/* One function per verb; main.c dispatches. Each takes argv with argv[0] = the verb. */
#pragma once

#include <glib.h>

int cmd_validate_main(int argc, char **argv);
int cmd_up_main(int argc, char **argv);
int cmd_run_main(int argc, char **argv);
int cmd_down_main(int argc, char **argv);
int cmd_status_main(int argc, char **argv);
int cmd_check_main(int argc, char **argv);
int cmd_fetch_main(int argc, char **argv);

/* Prints "meshlab: MESSAGE" and returns the exit status that fits the error. */
int cmd_fail(const GError *err);
