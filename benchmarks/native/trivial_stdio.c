/* A trivial stdio bot in C, for the benchmarks: the first legal call or card, at once.
 *
 * It reads one request line at a time (see docs/bots.md, "The lines") and answers the first entry of
 * "legal_calls" or "legal_cards" without parsing anything else, so that what a benchmark measures is the
 * arena and the transport, not the bot. benchmarks/trivial_bots.py builds it with the C compiler:
 *
 *     cc -O2 -o trivial_stdio trivial_stdio.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, stdin) != -1) {
        char *calls = strstr(line, "\"legal_calls\":[");
        char *cards = strstr(line, "\"legal_cards\":[\"");
        if (strstr(line, "\"type\":\"call\"") && calls) {
            printf("{\"call\":%ld}\n", strtol(calls + strlen("\"legal_calls\":["), NULL, 10));
        } else if (strstr(line, "\"type\":\"play\"") && cards) {
            char *card = cards + strlen("\"legal_cards\":[\"");
            printf("{\"card\":\"%.2s\"}\n", card);
        } else {
            continue; /* "game_over": nothing to answer */
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
