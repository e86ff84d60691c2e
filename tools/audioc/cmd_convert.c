/* audioc convert: decode any audio file to mono, at its own rate or
 * resampled, and write it in any format we can write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"

static void usage(FILE *f)
{
    fputs("usage: audioc convert [--rate HZ] IN OUT\n"
          "\n"
          "Decodes IN (WAV, FLAC, OGG/Vorbis, Opus, MP3, ...), mixes it to mono,\n"
          "resamples it to HZ (default: keep the rate) and writes OUT in the format\n"
          "its extension names: .wav (32-bit float), .flac, .ogg, .opus, .mp3.\n"
          "A .wav at --rate 16000 holds exactly the samples the VADs see.\n",
          f);
}

int cmd_convert(int argc, char **argv)
{
    int rate = 0, i;
    for (i = 0; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *o = argv[i], *v;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (arg_is(o, "--rate")) {
            if (!(v = arg_value(argc, argv, &i)) || arg_int(o, v, 1000, 768000, &rate)) return 2;
            continue;
        }
        int r = common_option(argc, argv, &i);
        if (r < 0) return 2;
        if (r == 0) {
            fprintf(stderr, "audioc convert: unknown option '%s'\n", o);
            return 2;
        }
    }
    if (argc - i != 2) {
        usage(stderr);
        return 2;
    }
    ac_audio_info info;
    if (ac_audio_convert(argv[i], rate, argv[i + 1], &info) != AC_OK) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
        return 1;
    }
    return 0;
}
