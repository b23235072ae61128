#include "cache/gobuild.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/fetch.h"
#include "cache/pins.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "core/util.h"
#include "results/json.h"

/* Minutes, not hours: the first build downloads about 600 modules and compiles for 4 min on 2
 * cores; a second one reads the Go caches. */
#define DOWNLOAD_TIMEOUT_S (30 * 60.0)
#define BUILD_TIMEOUT_S (60 * 60.0)
#define PROGRESS_EVERY_S 15.0

static const char *const commands[] = {"tailscale.com/cmd/tailscale",
                                       "tailscale.com/cmd/tailscaled",
                                       "github.com/juanfont/headscale/cmd/headscale"};

void ml_go_clear(struct ml_go *go)
{
    g_free(go->path);
    g_free(go->version);
    memset(go, 0, sizeof(*go));
}

char *ml_gobuild_dir(const char *cache_dir, const char *name)
{
    g_autofree char *abs = g_canonicalize_filename(cache_dir, NULL);
    g_autofree char *leaf = g_strdup_printf(
        "%s-%s", name, !strcmp(name, "tailscale") ? ML_TAILSCALE_VERSION : ML_HEADSCALE_VERSION);
    return g_build_filename(abs, "built", leaf, NULL);
}

char *ml_gobuild_module_dir(void)
{
    return ml_data_dir("images/go");
}

char *ml_gobuild_wanted_go(const char *module_dir, GError **err)
{
    g_autofree char *path = g_build_filename(module_dir, "go.mod", NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot read %s: the module meshlab builds Tailscale and Headscale from is "
                    "part of meshlab's source tree (images/go); reinstall meshlab or set "
                    "MESHLAB_DATA_DIR",
                    path);
        return NULL;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (size_t i = 0; lines[i]; i++)
        if (g_str_has_prefix(lines[i], "go "))
            return g_strstrip(g_strdup(lines[i] + 3));
    g_set_error(err, ML_ERROR, ML_ERR_HOST, "%s names no Go version (a 'go' line)", path);
    return NULL;
}

/* The numbers of a Go version: "1.26.8" -> 1, 26, 8; "1.27rc1" -> 1, 27, 0. */
static void version_numbers(const char *v, long n[3])
{
    n[0] = n[1] = n[2] = 0;
    const char *p = v && g_str_has_prefix(v, "go") ? v + 2 : v;
    for (int i = 0; p && *p && i < 3; i++) {
        char *end = NULL;
        n[i] = strtol(p, &end, 10);
        if (end == p || *end != '.')
            break;
        p = end + 1;
    }
}

bool ml_go_version_at_least(const char *a, const char *b)
{
    long x[3], y[3];
    version_numbers(a, x);
    version_numbers(b, y);
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] > y[i];
    return true;
}

/* The environment of every go command here: the machine's own Go and nothing else (no toolchain
 * download, no workspace above the module, no cgo), the module's go.sum as the only truth. */
static char **go_env(void)
{
    char **env = g_get_environ();
    static const char *const set[][2] = {
        {"GOTOOLCHAIN", "local"}, {"GOWORK", "off"},  {"GO111MODULE", "on"},
        {"CGO_ENABLED", "0"},     {"GOFLAGS", "-mod=readonly -trimpath -buildvcs=false"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(set); i++)
        env = g_environ_setenv(env, set[i][0], set[i][1], TRUE);
    return env;
}

bool ml_go_find(const char *module_dir, struct ml_go *ret, GError **err)
{
    memset(ret, 0, sizeof(*ret));
    g_autofree char *wanted = ml_gobuild_wanted_go(module_dir, err);
    if (!wanted)
        return false;
    g_autofree char *go = g_find_program_in_path("go");
    if (!go && g_file_test("/usr/local/go/bin/go", G_FILE_TEST_IS_EXECUTABLE))
        go = g_strdup("/usr/local/go/bin/go");
    if (!go) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "no Go toolchain: building Tailscale and Headscale from their modules needs Go "
                    "%s or later as 'go' on PATH or /usr/local/go/bin/go (Debian 12's golang-go "
                    "is 1.19, too old; install the release from go.dev/dl), or copy the "
                    "publishers' files into the cache (docs/tailscale.md)",
                    wanted);
        return false;
    }
    g_auto(GStrv) env = go_env();
    struct ml_proc_opts opts = {.cwd = module_dir, .envp = env};
    const char *argv[] = {go, "env", "GOVERSION", NULL};
    g_autofree char *out = NULL;
    if (!ml_spawn_opts(argv, &opts, 60, &out, err))
        return false;
    g_strstrip(out);
    if (!g_str_has_prefix(out, "go") || !ml_go_version_at_least(out, wanted)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "%s is %s; building Tailscale and Headscale from their modules needs Go %s or "
                    "later (images/go/go.mod); install it from go.dev/dl and put it first on PATH",
                    go, *out ? out : "of no version", wanted);
        return false;
    }
    ret->path = g_steal_pointer(&go);
    ret->version = g_strdup(out + 2);
    return true;
}

struct json_object *ml_gobuild_parse_version_m(const char *text)
{
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    const char *colon = lines[0] ? strrchr(lines[0], ':') : NULL;
    if (!colon || !g_str_has_prefix(g_strchug((char *)colon + 1), "go"))
        return NULL;
    struct json_object *doc = json_object_new_object();
    json_object_object_add(doc, "go", json_object_new_string(g_strstrip((char *)colon + 1)));
    struct json_object *mods = json_object_new_array();
    for (size_t i = 1; lines[i]; i++) {
        g_auto(GStrv) f = g_strsplit(g_strstrip(lines[i]), "\t", -1);
        guint n = g_strv_length(f);
        if (n >= 2 && !strcmp(f[0], "path"))
            json_object_object_add(doc, "path", json_object_new_string(f[1]));
        if (n < 3 || (strcmp(f[0], "mod") && strcmp(f[0], "dep")))
            continue;
        struct json_object *m = json_object_new_object();
        json_object_object_add(m, "path", json_object_new_string(f[1]));
        json_object_object_add(m, "version", json_object_new_string(f[2]));
        json_object_object_add(m, "sum", json_object_new_string(n >= 4 ? f[3] : ""));
        json_object_array_add(mods, m);
    }
    json_object_object_add(doc, "modules", mods);
    if (!json_object_object_get_ex(doc, "path", NULL) || json_object_array_length(mods) == 0) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

/* Says, every PROGRESS_EVERY_S, how far the build is: the packages `go build -v` compiled. */
struct progress {
    double started, said;
    const char *what;
};

static void watch_build(const GString *err, void *data)
{
    struct progress *p = data;
    double now = ml_now();
    if (now - p->said < PROGRESS_EVERY_S)
        return;
    p->said = now;
    unsigned n = 0;
    for (const char *c = err->str; (c = strchr(c, '\n')); c++)
        n++;
    ml_progress("fetch", "%s: %u packages compiled (%.0f s)", p->what, n, now - p->started);
}

/* The module version the binary at path says it was built from for module, checked against the
 * pin; its provenance (ml_gobuild_parse_version_m, with the binary's SHA-256) in *ret. */
static bool provenance(const struct ml_go *go, char **env, const char *module_dir,
                       const char *path, const char *module, const char *pin,
                       struct json_object **ret, GError **err)
{
    const char *argv[] = {go->path, "version", "-m", path, NULL};
    struct ml_proc_opts opts = {.cwd = module_dir, .envp = env};
    g_autofree char *out = NULL;
    if (!ml_spawn_opts(argv, &opts, 60, &out, err))
        return false;
    struct json_object *doc = ml_gobuild_parse_version_m(out);
    struct json_object *mods = doc ? ml_j_array(doc, "modules") : NULL;
    const char *found = NULL;
    for (size_t i = 0; i < ml_j_len(mods); i++)
        if (!g_strcmp0(ml_j_str(json_object_array_get_idx(mods, i), "path"), module))
            found = ml_j_str(json_object_array_get_idx(mods, i), "version");
    g_autofree char *want = g_strdup_printf("v%s", pin);
    if (g_strcmp0(found, want)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "%s was built from %s %s, not the pinned %s: images/go/go.mod and meshlab's "
                    "pins (cache/artifacts.h) disagree; fix one of them",
                    path, module, found ? found : "(none)", want);
        json_object_put(doc);
        return false;
    }
    g_autofree char *sha = ml_fetch_sha256_file(path, err);
    if (!sha) {
        json_object_put(doc);
        return false;
    }
    json_object_object_add(doc, "sha256", json_object_new_string(sha));
    *ret = doc;
    return true;
}

/* The provenance file of one built artifact: how it was obtained, the Go and module, and each
 * binary's modules and hash. */
static bool write_provenance(const char *dir, const char *name, const char *version,
                             const struct ml_go *go, const char *go_sum_sha,
                             struct json_object *binaries, GError **err)
{
    struct json_object *p = json_object_new_object();
    json_object_object_add(p, "name", json_object_new_string(name));
    json_object_object_add(p, "version", json_object_new_string(version));
    json_object_object_add(p, "obtained", json_object_new_string("built from its Go module"));
    json_object_object_add(p, "go", json_object_new_string(go->version));
    json_object_object_add(p, "module", json_object_new_string("images/go"));
    json_object_object_add(p, "go_sum_sha256", json_object_new_string(go_sum_sha));
    json_object_object_add(p, "binaries", json_object_get(binaries));
    g_autofree char *path = g_build_filename(dir, "provenance.json", NULL);
    const char *text = json_object_to_json_string_ext(p, JSON_C_TO_STRING_PRETTY);
    bool ok = ml_write_file(path, text, -1, 0644, err);
    json_object_put(p);
    return ok;
}

/* Moves the built directory tmp/name into CACHE/built/name-version, replacing an older build. */
static bool place(const char *tmp, const char *cache_dir, const char *name, GError **err)
{
    g_autofree char *from = g_build_filename(tmp, name, NULL);
    g_autofree char *to = ml_gobuild_dir(cache_dir, name);
    g_autofree char *parent = g_path_get_dirname(to);
    if (!ml_mkdir_p(parent, 0755, err))
        return false;
    g_autofree char *old = g_strdup_printf("%s.old-%d", to, (int)getpid());
    bool had = rename(to, old) == 0;
    if (rename(from, to) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot move %s to %s: %s", from, to,
                    g_strerror(errno));
        if (had)
            rename(old, to);
        return false;
    }
    if (had)
        ml_rundir_remove(old);
    return true;
}

/* go build of the three commands into tmp, then each into tmp/tailscale or tmp/headscale with
 * its provenance. */
static bool build_in(const struct ml_go *go, const char *module_dir, const char *tmp,
                     GError **err)
{
    g_auto(GStrv) env = go_env();
    struct ml_proc_opts opts = {.cwd = module_dir, .envp = env};
    ml_progress("fetch", "downloading the modules images/go/go.sum pins (Go %s; the first time "
                         "about 600 modules, then none)", go->version);
    const char *download[] = {go->path, "mod", "download", NULL};
    if (!ml_spawn_opts(download, &opts, DOWNLOAD_TIMEOUT_S, NULL, err))
        return false;
    g_autofree char *what = g_strdup_printf(
        "building Tailscale " ML_TAILSCALE_VERSION " and Headscale " ML_HEADSCALE_VERSION);
    struct progress pr = {ml_now(), ml_now(), what};
    opts.watch = watch_build;
    opts.data = &pr;
    ml_progress("fetch", "%s from their modules (about 4 min on 2 cores the first time)", what);
    g_autofree char *bin = g_build_filename(tmp, "bin", NULL);
    g_autofree char *out = g_strconcat(bin, "/", NULL);
    const char *build[] = {go->path,
                           "build",
                           "-v",
                           "-ldflags",
                           "-X tailscale.com/version.shortStamp=" ML_TAILSCALE_VERSION
                           " -X tailscale.com/version.longStamp=" ML_TAILSCALE_VERSION "-gomod",
                           "-o",
                           out,
                           commands[0],
                           commands[1],
                           commands[2],
                           NULL};
    if (!ml_mkdir_p(bin, 0755, err) || !ml_spawn_opts(build, &opts, BUILD_TIMEOUT_S, NULL, err))
        return false;
    ml_progress("fetch", "%s: done in %.0f s", what, ml_now() - pr.started);
    g_autofree char *sum_path = g_build_filename(module_dir, "go.sum", NULL);
    g_autofree char *go_sum = ml_fetch_sha256_file(sum_path, err);
    if (!go_sum)
        return false;
    static const struct {
        const char *name, *version, *module;
        const char *bins[3];
    } sets[] = {
        {"tailscale", ML_TAILSCALE_VERSION, "tailscale.com", {"tailscale", "tailscaled", NULL}},
        {"headscale", ML_HEADSCALE_VERSION, "github.com/juanfont/headscale", {"headscale", NULL}},
    };
    for (size_t s = 0; s < G_N_ELEMENTS(sets); s++) {
        g_autofree char *dir = g_build_filename(tmp, sets[s].name, NULL);
        if (!ml_mkdir_p(dir, 0755, err))
            return false;
        struct json_object *bins = json_object_new_object();
        bool ok = true;
        for (size_t b = 0; ok && sets[s].bins[b]; b++) {
            g_autofree char *from = g_build_filename(bin, sets[s].bins[b], NULL);
            g_autofree char *to = g_build_filename(dir, sets[s].bins[b], NULL);
            struct json_object *p = NULL;
            ok = rename(from, to) == 0 && provenance(go, env, module_dir, to, sets[s].module,
                                                     sets[s].version, &p, err);
            if (ok)
                json_object_object_add(bins, sets[s].bins[b], p);
            else if (err && !*err)
                g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot move %s: %s", from,
                            g_strerror(errno));
        }
        ok = ok && write_provenance(dir, sets[s].name, sets[s].version, go, go_sum, bins, err);
        json_object_put(bins);
        if (!ok)
            return false;
    }
    return true;
}

bool ml_gobuild_programs(const char *cache_dir, GError **err)
{
    g_autofree char *module_dir = ml_gobuild_module_dir();
    struct ml_go go = {0};
    if (!ml_go_find(module_dir, &go, err))
        return false;
    g_autofree char *abs = g_canonicalize_filename(cache_dir, NULL);
    g_autofree char *tmpl = g_strdup_printf("%s/.build-gomod-%d-XXXXXX", abs, (int)getpid());
    bool ok = ml_mkdir_p(abs, 0755, err) && g_mkdtemp_full(tmpl, 0755) != NULL;
    if (!ok && err && !*err)
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot make a build directory in %s: %s", abs,
                    g_strerror(errno));
    ok = ok && build_in(&go, module_dir, tmpl, err) && place(tmpl, abs, "tailscale", err) &&
         place(tmpl, abs, "headscale", err);
    ml_rundir_remove(tmpl);
    ml_go_clear(&go);
    return ok;
}
