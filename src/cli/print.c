#include "cli/print.h"

#include <getopt.h>
#include <stdlib.h>

#include "core/util.h"

bool cmd_print_args(int argc, char **argv, const char *usage, int operands,
                    enum cmd_format *ret_format, int *ret_status)
{
    static const struct option with_json[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    /* Without ret_format, the table starts past --json. */
    const struct option *options = ret_format ? with_json : with_json + 1;
    int opt;
    if (ret_format)
        *ret_format = CMD_TEXT;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ret_format ? "hj" : "h", options, NULL)) != -1) {
        if (opt == 'j' && ret_format) {
            *ret_format = CMD_JSON;
            continue;
        }
        bool help = opt == 'h';
        fputs(usage, help ? stdout : stderr);
        *ret_status = help ? ML_EXIT_OK : ML_EXIT_USAGE;
        return false;
    }
    if (argc - optind != operands) {
        fputs(usage, stderr);
        *ret_status = ML_EXIT_USAGE;
        return false;
    }
    return true;
}

/* The text renderers print what guests and results files said: written to memory first, then
 * out with its control characters escaped, so none of it is a terminal escape. */
static void put_text(FILE *f, struct json_object *doc, cmd_text_fn text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fputs("meshlab: out of memory\n", stderr);
        return;
    }
    text(mem, doc);
    fclose(mem);
    g_autofree char *safe = ml_escape_controls(buf);
    fputs(safe, f);
    free(buf);
}

void cmd_print(FILE *f, enum cmd_format format, struct json_object *doc, cmd_text_fn text)
{
    if (format == CMD_JSON)
        fprintf(f, "%s\n",
                json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                        JSON_C_TO_STRING_SPACED |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE));
    else
        put_text(f, doc, text);
    fflush(f);
}
