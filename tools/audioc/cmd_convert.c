/* audioc convert: decode any audio file to mono, at its own rate or
 * resampled, and write it in any format we can write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "input.h"
#include "options.h"

static void usage(FILE *f)
{
    fputs("usage: audioc convert [--rate HZ] IN OUT\n"
          "\n"
          "Decodes IN (WAV, FLAC, OGG/Vorbis, Opus, MP3, M4A/MP4, WebM, AAC, ...; - is\n"
          "standard input), mixes it to mono,\n"
          "resamples it to HZ (default: keep the rate) and writes OUT in the format\n"
          "its extension names: .wav (32-bit float), .flac, .ogg, .opus, .mp3.\n"
          "A .wav at --rate 16000 holds exactly the samples the VADs see. Opus holds\n"
          "8, 12, 16, 24 or 48 kHz, MP3 8 to 48 kHz: another rate is refused before OUT\n"
          "is made (give --rate).\n",
          f);
}

int cmd_convert(int argc, char **argv)
{
    enum { O_RATE };
    static const opt_def defs[] = {[O_RATE] = {"--rate", 1}, {0}};
    const char *files[2], *v;
    int rate = 0, n_files = 0;
    opt_parser p;
    opt_init(&p, "audioc convert", argc, argv);
    for (int k; (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_RATE:
            if (arg_int(p.opt, v, 1000, 768000, &rate)) return 2;
            break;
        case OPT_OPERAND:
            if (n_files == 2) {
                usage(stderr);
                return 2;
            }
            files[n_files++] = v;
            break;
        case OPT_HELP: usage(stdout); return 0;
        default: return 2;
        }
    }
    if (n_files != 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(files[1], "-") == 0) {
        fprintf(stderr, "audioc convert: OUT - (standard output) is not supported: give a file name, whose "
                        "extension picks the format\n");
        return 2;
    }
    ac_audio_input in;
    char *buf;
    if (cli_input_open(files[0], &in, &buf)) return 1;
    int rc = 0;
    if (ac_audio_convert_input(&in, rate, files[1], NULL) != AC_OK) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
        rc = 1;
    }
    free(buf);
    return rc;
}
