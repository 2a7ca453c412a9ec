/* The usage of the `haven` command (haven_help.c). */
#ifndef HAVEN_HELP_H
#define HAVEN_HELP_H

#include <stdbool.h>
#include <stdio.h>

#define HV_HAVEN_DEFAULT_POLICY "default"
#define HV_AUDIT_DEFAULT_FILES_HELP                                         \
  "engine containers' trails\n"                                           \
  "      (/var/log/haven/containers/*.jsonl as root, $XDG_STATE_HOME/haven/containers/*.jsonl\n"  \
  "      otherwise) and haven run's ~/.local/state/haven/audit.log"

/* The usage of one command (argv[1]: "run", "policy", ...), or of all
 * when command is NULL. */
void hv_haven_usage (FILE *out, const char *command);
/* argv[1] is a command with a usage section. */
bool hv_haven_is_command (const char *command);
/* --help or -h among argv[2..] before "--". */
bool hv_haven_asks_help (int argc, char **argv);
#endif
