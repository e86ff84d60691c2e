/* audioc-server: an OpenAI-compatible HTTP server for transcription, voice
 * activity detection, speech from text and voice conversion. This file
 * reads the options (command line over environment) into the server_config
 * that every part is handed, loads the models and the --voice references
 * once (shared read-only), starts the workers, which split the thread
 * budget, and the HTTP front, and stops gracefully on SIGINT/SIGTERM. The
 * endpoints are the rows of routes.c. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "default_model.h"
#include "speech.h"

static void usage(FILE *f)
{
    fputs(
        "usage: audioc-server [options]\n"
        "\n"
        "Serves speech recognition, voice activity detection and speech in a given\n"
        "voice over HTTP with OpenAI's API shapes: POST /v1/audio/transcriptions,\n"
        "/v1/audio/vad, /v1/audio/speech, /v1/audio/conversions; GET /v1/models,\n"
        "/v1/audio/voices, /health; and a web page for them at GET / (open it in a\n"
        "browser). Every option can also be set from the environment variable in\n"
        "brackets; options win.\n"
        "\n"
        "  --host ADDR          address to listen on (127.0.0.1) [AUDIOC_HOST]\n"
        "  --port N             port; 0 picks a free one (8080) [AUDIOC_PORT]\n"
        "  --model ID=PATH      serve the model at PATH as ID; repeat for several.\n"
        "                       PATH is an ASR package (folder or .gguf), VAD weights or\n"
        "                       a Vevo2 package (speech and voice conversion), or\n"
        "                       hf:ORG/NAME[@REVISION] on the Hugging Face Hub (fetched\n"
        "                       into its cache on first use; HF_HUB_OFFLINE=1: cache only)\n"
        "                       [AUDIOC_MODELS: ID=PATH,ID=PATH]; default: the bundled\n"
        "                       " DEFAULT_MODEL_ID " as '" DEFAULT_MODEL_ID "' and " DEFAULT_VAD_ID "\n"
        "                       as '" DEFAULT_VAD_ID "'\n"
        "  --weights T          hold every model's weight matrices as f32, f16, bf16 or\n"
        "                       q8_0, converted when it loads (default: as its files\n"
        "                       store them; docs/models/ lists what each family keeps)\n"
        "                       [AUDIOC_WEIGHTS]\n"
        "  --model-weights ID=T the same for the model served as ID only (T: stored,\n"
        "                       f32, f16, bf16 or q8_0); repeat for several\n"
        "  --voice ID=REF[:TEXT] a reference voice for /v1/audio/speech and conversions:\n"
        "                       a few seconds of the speaker in any audio format; TEXT,\n"
        "                       what it says, makes it also the style reference of\n"
        "                       speech from text. Repeat for several. Each is checked\n"
        "                       at start-up as a request would use it (0.5 to 60 s,\n"
        "                       not silent, recorded at 16 kHz or more) and refused\n"
        "                       with the reason\n"
        "  --lenient-voices     a --voice that fails those checks is left out with a\n"
        "                       warning instead\n"
        "  --no-vad             transcriptions recognize the whole audio unless a request\n"
        "                       says vad=true (default: the first VAD model served finds\n"
        "                       the speech; a request's vad=false turns it off)\n"
        "  --no-webui           no web page at GET / (the API is unchanged)\n"
        "  --threads N          threads in all (physical cores) [AUDIOC_THREADS]\n"
        "  --workers N          requests run at once, sharing the threads\n"
        "                       (threads / 2, at least 1) [AUDIOC_WORKERS]\n"
        "  --quick-workers N    more workers for quick requests only (VAD, and\n"
        "                       transcriptions of uploads up to 1 MB), which every\n"
        "                       worker also takes first: they never wait behind long\n"
        "                       speech or transcriptions (1) [AUDIOC_QUICK_WORKERS]\n"
        "  --max-queue N        requests that may wait for a worker (at least 1); more\n"
        "                       get 503 (16)\n"
        "                       [AUDIOC_MAX_QUEUE]\n"
        "  --max-upload-mb N    largest upload; larger get 413 (25) [AUDIOC_MAX_UPLOAD_MB]\n"
        "  --max-connections N  open connections in all (256); when all are taken, a\n"
        "                       new client replaces the one waiting longest for its\n"
        "                       request head [AUDIOC_MAX_CONNECTIONS]\n"
        "  --max-connections-per-client N\n"
        "                       open connections from one address (32)\n"
        "                       [AUDIOC_MAX_CONNECTIONS_PER_CLIENT]\n"
        "  --header-timeout S   seconds a client has to send a request head, after\n"
        "                       connecting or after its previous answer (10)\n"
        "                       [AUDIOC_HEADER_TIMEOUT]\n"
        "  --min-upload-rate KB an upload must average KB kilobytes per second after\n"
        "                       the header timeout's grace, or it is dropped (16)\n"
        "                       [AUDIOC_MIN_UPLOAD_RATE]\n"
        "  --shutdown-timeout S on SIGINT/SIGTERM, wait up to S seconds for the\n"
        "                       requests in progress, then stop them (30)\n"
        "                       [AUDIOC_SHUTDOWN_TIMEOUT]\n"
        "  --max-buffer-mb N    upload bytes held in memory at once, all requests\n"
        "                       together; more get 503 before their body is read\n"
        "                       (256, or 4 x --max-upload-mb when larger)\n"
        "                       [AUDIOC_MAX_BUFFER_MB]\n"
        "  --max-speech-seconds S\n"
        "                       the most audio one speech or conversion request may\n"
        "                       make: a request that could make more (every text chunk\n"
        "                       at its token limit) is refused with 400 before any\n"
        "                       work; 0: no limit (600) [AUDIOC_MAX_SPEECH_SECONDS]\n"
        "  --request-timeout S  seconds of work one request may take once it runs; it\n"
        "                       is then stopped and answered 503 (or its stream ends\n"
        "                       with an error event); 0: no limit (900)\n"
        "                       [AUDIOC_REQUEST_TIMEOUT]\n"
        "  --api-key KEY        require 'Authorization: Bearer KEY' on /v1/ [AUDIOC_API_KEY]\n"
        "  --cors ORIGIN        allow browser calls from ORIGIN (or *) [AUDIOC_CORS]\n"
        "  -q, --quiet          no request log on stderr\n"
        "  -h, --help           this help\n"
        "\n"
        "Limits of one voice request: the text at most 64 KB, steps 1 to 100, min_tokens\n"
        "and max_tokens at most 4096 per text chunk (min_tokens no more than the chunk's\n"
        "text can need, about half a second a character), references at most 60 s.\n"
        "A 503 carries Retry-After: the seconds the queue ahead needs.\n"
        "\n"
        "When it is ready it prints 'audioc-server: listening on http://HOST:PORT'.\n"
        "SIGINT or SIGTERM closes the listening socket (new clients are refused),\n"
        "answers the requests in progress for up to --shutdown-timeout seconds,\n"
        "stops what is left and exits 0 (a second signal stops it at once).\n",
        f);
}

static int add_model(server_config *cfg, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1] || (size_t)(eq - spec) >= sizeof cfg->models->id) {
        fprintf(stderr, "audioc-server: --model '%s': expected ID=PATH with an ID of 1..63 characters\n", spec);
        return -1;
    }
    served_model *v = realloc(cfg->models, (size_t)(cfg->n_models + 1) * sizeof *v);
    if (!v) return -1;
    cfg->models = v;
    served_model *m = &v[cfg->n_models];
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%.*s", (int)(eq - spec), spec);
    m->path = eq + 1;
    for (int i = 0; i < cfg->n_models; i++)
        if (strcmp(v[i].id, m->id) == 0) {
            fprintf(stderr, "audioc-server: model id '%s' is given twice\n", m->id);
            return -1;
        }
    cfg->n_models++;
    return 0;
}

/* The family and task come from the model's files (ac_model_probe). */
static int load_model(served_model *m, ac_weight_type weights)
{
    ac_load_options o;
    ac_load_options_default(&o);
    o.weights = m->weights_given ? m->weights : weights;
    if (ac_model_load_with(m->path, NULL, &o, &m->model) != AC_OK) {
        fprintf(stderr, "audioc-server: model '%s': %s\n", m->id, ac_last_error());
        return -1;
    }
    m->task = ac_model_task(m->model);
    m->family = ac_model_family(m->model);
    fprintf(stderr, "audioc-server: model '%s': %s (%s) from %s, weights %s\n", m->id, m->family,
            ac_task_name(m->task), m->path, ac_weight_type_name(o.weights));
    return 0;
}

/* The --model-weights ID=TYPE of CFG onto the models they name. */
static int apply_model_weights(server_config *cfg)
{
    for (int k = 0; k < cfg->n_model_weights; k++) {
        const char *spec = cfg->model_weights[k], *eq = strchr(spec, '=');
        int i = 0;
        while (eq && i < cfg->n_models &&
               !(strlen(cfg->models[i].id) == (size_t)(eq - spec) && !strncmp(cfg->models[i].id, spec, (size_t)(eq - spec))))
            i++;
        if (!eq || i == cfg->n_models) {
            fprintf(stderr, "audioc-server: --model-weights '%s': expected ID=TYPE with the ID of a --model\n", spec);
            return -1;
        }
        if (arg_weights("--model-weights", eq + 1, &cfg->models[i].weights)) return -1;
        cfg->models[i].weights_given = 1;
    }
    return 0;
}

/* The models (loaded or not) and the voices of CFG. */
static void config_free(server_config *cfg)
{
    for (int i = 0; i < cfg->n_models; i++) ac_model_free(cfg->models[i].model);
    free(cfg->models);
    cfg->models = NULL;
    cfg->n_models = 0;
    free(cfg->model_weights);
    cfg->model_weights = NULL;
    cfg->n_model_weights = 0;
    voices_free(cfg);
}

/* Each worker runs every model once on a moment of silence before the first
 * request: the weights are paged in and the worker's scratch and thread pool
 * exist, so the first requests are not slower and memory stays flat after. */
static void warm_up(void *arg)
{
    const server_config *cfg = arg;
    static const float silence[8000];
    for (int i = 0; i < cfg->n_models; i++) {
        served_model *m = &cfg->models[i];
        ac_audio_input in = ac_input_pcm(silence, 8000, 1, 16000);
        if (m->task == AC_TASK_ASR) {
            ac_asr_options o;
            ac_asr_options_default(&o);
            o.max_new_tokens = 4;
            ac_asr_result *r;
            if (ac_asr_transcribe(m->model, &in, &o, &r) == AC_OK) ac_asr_result_free(r);
        } else if (m->task == AC_TASK_VAD) {
            ac_vad_result *r;
            if (ac_vad_run(m->model, &in, NULL, &r) == AC_OK) ac_vad_result_free(r);
        }
    }
}

/* Settings from the environment first; the command line overrides them. */
static int set_option(server_config *cfg, const char *opt, const char *v, int *threads)
{
    if (!strcmp(opt, "--host")) cfg->host = v;
    else if (!strcmp(opt, "--port")) return arg_int(opt, v, 0, 65535, &cfg->port);
    else if (!strcmp(opt, "--threads")) return arg_int(opt, v, 1, 256, threads);
    else if (!strcmp(opt, "--workers")) return arg_int(opt, v, 1, 256, &cfg->workers);
    else if (!strcmp(opt, "--quick-workers")) return arg_int(opt, v, 0, 256, &cfg->quick_workers);
    else if (!strcmp(opt, "--max-queue")) return arg_int(opt, v, 1, 100000, &cfg->max_queue);
    else if (!strcmp(opt, "--max-upload-mb")) {
        int mb;
        if (arg_int(opt, v, 1, 1 << 20, &mb)) return -1;
        cfg->max_upload_mb = mb;
    } else if (!strcmp(opt, "--api-key")) cfg->api_key = *v ? v : NULL;
    else if (!strcmp(opt, "--cors")) cfg->cors = *v ? v : NULL;
    else if (!strcmp(opt, "--model")) return add_model(cfg, v);
    else if (!strcmp(opt, "--weights")) return arg_weights(opt, v, &cfg->weights);
    else if (!strcmp(opt, "--model-weights")) {
        const char **mw = realloc(cfg->model_weights, (size_t)(cfg->n_model_weights + 1) * sizeof *mw);
        if (!mw) return -1;
        cfg->model_weights = mw;
        mw[cfg->n_model_weights++] = v;
    }
    else if (!strcmp(opt, "--voice")) return voice_add(cfg, v);
    else if (!strcmp(opt, "--max-connections")) return arg_int(opt, v, 1, 100000, &cfg->max_connections);
    else if (!strcmp(opt, "--max-connections-per-client")) return arg_int(opt, v, 1, 100000, &cfg->max_per_client);
    else if (!strcmp(opt, "--header-timeout")) {
        int s;
        if (arg_int(opt, v, 1, 3600, &s)) return -1;
        cfg->header_timeout = s;
    } else if (!strcmp(opt, "--max-buffer-mb")) {
        int mb;
        if (arg_int(opt, v, 1, 1 << 20, &mb)) return -1;
        cfg->max_buffer_mb = mb;
    } else if (!strcmp(opt, "--shutdown-timeout")) {
        int s;
        if (arg_int(opt, v, 0, 86400, &s)) return -1;
        cfg->shutdown_timeout = s;
    } else if (!strcmp(opt, "--max-speech-seconds") || !strcmp(opt, "--request-timeout")) {
        int sec;
        if (arg_int(opt, v, 0, 86400, &sec)) return -1;
        *(opt[2] == 'm' ? &cfg->max_speech_seconds : &cfg->request_timeout) = sec;
    } else if (!strcmp(opt, "--min-upload-rate")) {
        int kb;
        if (arg_int(opt, v, 0, 1 << 20, &kb)) return -1;
        cfg->min_upload_rate = kb * 1024.0;
    }
    else return 1;
    return 0;
}

static const struct {
    const char *env, *opt;
} env_options[] = {{"AUDIOC_HOST", "--host"},         {"AUDIOC_PORT", "--port"},
                   {"AUDIOC_THREADS", "--threads"},   {"AUDIOC_WORKERS", "--workers"},
                   {"AUDIOC_QUICK_WORKERS", "--quick-workers"},
                   {"AUDIOC_MAX_QUEUE", "--max-queue"}, {"AUDIOC_MAX_UPLOAD_MB", "--max-upload-mb"},
                   {"AUDIOC_API_KEY", "--api-key"},   {"AUDIOC_CORS", "--cors"},
                   {"AUDIOC_MAX_CONNECTIONS", "--max-connections"},
                   {"AUDIOC_MAX_CONNECTIONS_PER_CLIENT", "--max-connections-per-client"},
                   {"AUDIOC_HEADER_TIMEOUT", "--header-timeout"},
                   {"AUDIOC_MIN_UPLOAD_RATE", "--min-upload-rate"},
                   {"AUDIOC_SHUTDOWN_TIMEOUT", "--shutdown-timeout"},
                   {"AUDIOC_MAX_BUFFER_MB", "--max-buffer-mb"},
                   {"AUDIOC_MAX_SPEECH_SECONDS", "--max-speech-seconds"},
                   {"AUDIOC_REQUEST_TIMEOUT", "--request-timeout"},
                   {"AUDIOC_WEIGHTS", "--weights"}};

static int parse(server_config *cfg, int argc, char **argv, int *threads)
{
    static char *env_models;
    for (size_t k = 0; k < sizeof env_options / sizeof *env_options; k++) {
        const char *v = getenv(env_options[k].env);
        int on_cli = 0;
        for (int i = 1; i < argc; i++) on_cli |= arg_is(argv[i], env_options[k].opt);
        if (v && !on_cli && set_option(cfg, env_options[k].opt, v, threads)) return -1;
    }
    int cli_models = 0;
    for (int i = 1; i < argc; i++) cli_models |= arg_is(argv[i], "--model");
    const char *em = getenv("AUDIOC_MODELS");
    if (em && *em && !cli_models) {   /* --model replaces the environment's list */
        env_models = strdup(em);
        for (char *save, *tok = strtok_r(env_models, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            if (add_model(cfg, tok)) return -1;
    }
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
            cfg->quiet = 1;
            continue;
        }
        if (!strcmp(o, "--no-vad")) {
            cfg->no_vad = 1;
            continue;
        }
        if (!strcmp(o, "--no-webui")) {
            cfg->no_webui = 1;
            continue;
        }
        if (!strcmp(o, "--lenient-voices")) {
            cfg->lenient_voices = 1;
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(o, "="), o);
        int known = 0;
        for (size_t k = 0; k < sizeof env_options / sizeof *env_options; k++) known |= !strcmp(name, env_options[k].opt);
        if (!known && strcmp(name, "--model") != 0 && strcmp(name, "--model-weights") != 0 &&
            strcmp(name, "--voice") != 0) {
            fprintf(stderr, "audioc-server: unknown option '%s' (see --help)\n", o);
            return -1;
        }
        if (!(v = arg_value(argc, argv, &i)) || set_option(cfg, name, v, threads)) return -1;
    }
    const char *def = default_asr_model(), *def_vad = default_vad_model();
    if (!cfg->n_models && def) {
        static char spec[4200], vad_spec[4200];
        snprintf(spec, sizeof spec, DEFAULT_MODEL_ID "=%s", def);
        add_model(cfg, spec);
        snprintf(vad_spec, sizeof vad_spec, DEFAULT_VAD_ID "=%s", def_vad ? def_vad : "");
        if (def_vad) add_model(cfg, vad_spec);
    }
    if (!cfg->n_models) {
        fprintf(stderr, "audioc-server: no models: give --model ID=PATH (or AUDIOC_MODELS)\n");
        return -1;
    }
    return apply_model_weights(cfg);
}

static pthread_t main_thread;

/* A SIGINT/SIGTERM that the kernel hands to a thread not blocking it (one
 * a library started before main, as OpenBLAS's) while the main thread is
 * not yet in sigwait would otherwise end the process at once: it goes on
 * to the main thread, which blocks it, so that sigwait takes it. */
static void to_main_thread(int sig) { pthread_kill(main_thread, sig); }

int main(int argc, char **argv)
{
    arg_program = "audioc-server";
    ac_set_progress(0);   /* no progress bars from the workers */
    /* every connection thread would get its own malloc arena and keep what it
     * freed there: two arenas keep the memory flat under load */
    mallopt(M_ARENA_MAX, 2);
    /* a request's large buffers come from mmap and go back on free: by
     * default the threshold rises with each large free, and what a request
     * freed then stays resident, an amount that depends on which worker ran
     * which request */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* the defaults; the options change them, and every part is handed this one */
    server_config config = {.host = "127.0.0.1", .port = 8080, .max_queue = 16, .max_upload_mb = 25,
                            .max_connections = 256, .max_per_client = 32, .header_timeout = 10,
                            .min_upload_rate = 16 * 1024.0, .shutdown_timeout = 30,
                            .max_speech_seconds = AC_VOICE_MAX_SECONDS, .quick_workers = 1, .request_timeout = 900};
    server_config *cfg = &config;
    int threads = ac_get_threads();
    if (parse(cfg, argc, argv, &threads)) {
        config_free(cfg);
        return 2;
    }
    if (!cfg->max_buffer_mb) cfg->max_buffer_mb = 4 * cfg->max_upload_mb > 256 ? 4 * cfg->max_upload_mb : 256;
    if (cfg->max_buffer_mb < cfg->max_upload_mb + 1) {
        fprintf(stderr, "audioc-server: --max-buffer-mb %ld cannot hold one upload of --max-upload-mb %ld (give at "
                "least %ld)\n", cfg->max_buffer_mb, cfg->max_upload_mb, cfg->max_upload_mb + 1);
        config_free(cfg);
        return 2;
    }
    if (!cfg->workers) cfg->workers = threads / 2 > 1 ? threads / 2 : 1;
    int each = threads / cfg->workers > 1 ? threads / cfg->workers : 1;

    /* signals are taken by sigwait below; the threads started after this
     * block them, and any other passes them on */
    main_thread = pthread_self();
    struct sigaction pass = {.sa_handler = to_main_thread};
    sigemptyset(&pass.sa_mask);
    sigaction(SIGINT, &pass, NULL);
    sigaction(SIGTERM, &pass, NULL);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    int rc = 1;
    for (int i = 0; i < cfg->n_models; i++)
        if (load_model(&cfg->models[i], cfg->weights)) goto out;
    if (voices_load(cfg)) goto out;
    if (queue_start(cfg->workers, cfg->quick_workers, each, cfg->max_queue, cfg->request_timeout, warm_up, cfg)) {
        fprintf(stderr, "audioc-server: cannot start %d workers\n", cfg->workers);
        goto out;
    }
    int port;
    int e = http_start(cfg, &port);
    if (e) {
        fprintf(stderr, "audioc-server: %s %s:%d\n", e == -1 ? "not an IP address:" : "cannot listen on", cfg->host,
                cfg->port);
        queue_stop();
        goto out;
    }
    fprintf(stderr, "audioc-server: %d worker(s) and %d quick worker(s) x %d thread(s), queue %d, uploads up to %ld MB (%ld MB at once)%s%s\n",
            cfg->workers, cfg->quick_workers, each, cfg->max_queue, cfg->max_upload_mb, cfg->max_buffer_mb, cfg->api_key ? ", API key required" : "",
            cfg->cors ? ", CORS on" : "");
    printf("audioc-server: listening on http://%s%s%s:%d\n", strchr(cfg->host, ':') ? "[" : "", cfg->host,
           strchr(cfg->host, ':') ? "]" : "", port);
    fflush(stdout);
    int sig;
    sigwait(&stop, &sig);
    /* graceful: accept nothing new and let the requests in progress be
     * answered until the deadline; a second signal stops at once */
    http_quiesce();
    fprintf(stderr, "audioc-server: stopping after %d request(s) in progress, %.0f s at most (%s; again to stop now)\n",
            http_in_flight(), cfg->shutdown_timeout, sig == SIGINT ? "SIGINT" : "SIGTERM");
    struct timespec tick = {0, 50 * 1000 * 1000};
    double until = ac_now() + cfg->shutdown_timeout;
    while (http_in_flight() > 0 && ac_now() < until && sigtimedwait(&stop, NULL, &tick) < 0) {
    }
    if (http_in_flight() > 0)
        fprintf(stderr, "audioc-server: stopping %d request(s) still in progress\n", http_in_flight());
    int stopped = queue_cancel_running();   /* nothing runs past the deadline */
    queue_stop();                           /* what still waits is dropped (503) */
    /* the answers of the jobs stopped (a 503, a stream's last event saying why) go out first, briefly */
    for (double grace = ac_now() + 2; stopped && http_in_flight() > 0 && ac_now() < grace &&
                                      sigtimedwait(&stop, NULL, &tick) < 0;) {
    }
    http_stop();              /* closes every connection, slow uploads too */
    rc = 0;
out:
    config_free(cfg);
    return rc;
}
