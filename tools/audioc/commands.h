/* The audioc subcommands and what they share. */
#ifndef AUDIOC_TOOLS_COMMANDS_H
#define AUDIOC_TOOLS_COMMANDS_H

int cmd_vad(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_transcribe(int argc, char **argv);

/* -q, -v, --progress, --no-progress: handled for every command. */
int common_option(const char *arg);

#endif
