/* Transcribes an audio file, then says a sentence in a voice: the two calls
 * a program embedding audio.c starts from.
 *
 *   transcribe_and_speak ASR_MODEL AUDIO [VOICE_MODEL VOICE TEXT OUT.wav]
 *
 * ASR_MODEL: e.g. models/hviske-tiny-da; VOICE_MODEL: a Vevo2 package;
 * VOICE: a few seconds of the voice to speak in. OUT.wav holds 16-bit PCM. */
#include <audioc.h>
#include <stdio.h>

static int fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, ac_last_error());
    return 1;
}

static int transcribe(const char *model_path, const char *audio)
{
    ac_model *model;
    if (ac_model_load(model_path, NULL, &model) != AC_OK) return fail(model_path);
    ac_audio_input in = ac_input_file(audio);
    ac_asr_result *result;
    ac_status s = ac_asr_transcribe(model, &in, NULL, &result);
    ac_model_free(model);
    if (s != AC_OK) return fail(audio);
    for (size_t i = 0; i < result->n_segments; i++)
        printf("[%.2f - %.2f] %s\n", result->segments[i].start, result->segments[i].end, result->segments[i].text);
    ac_asr_result_free(result);
    return 0;
}

static int speak(const char *model_path, const char *voice, const char *text, const char *out)
{
    ac_model *model;
    if (ac_model_load(model_path, NULL, &model) != AC_OK) return fail(model_path);
    ac_audio_input target = ac_input_file(voice);
    ac_voice_options opt;
    ac_voice_options_default(&opt);
    opt.target_voice = &target;
    ac_voice_result *result;
    ac_status s = ac_voice_speak(model, text, &opt, &result);
    ac_model_free(model);
    if (s != AC_OK) return fail(text);
    s = ac_audio_save(out, result->samples, result->n_samples, 1, result->sample_rate, 1);
    if (s == AC_OK) printf("%s: %.2f s at %d Hz\n", out, (double)result->n_samples / result->sample_rate,
                           result->sample_rate);
    ac_voice_result_free(result);
    return s == AC_OK ? 0 : fail(out);
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 7) {
        fprintf(stderr, "usage: %s ASR_MODEL AUDIO [VOICE_MODEL VOICE TEXT OUT.wav]\n", argv[0]);
        return 2;
    }
    printf("audio.c %s\n", ac_version(NULL, NULL, NULL));
    if (transcribe(argv[1], argv[2])) return 1;
    return argc == 7 ? speak(argv[3], argv[4], argv[5], argv[6]) : 0;
}
