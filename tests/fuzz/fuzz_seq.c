/* fuzz_seq.c — fuzz_call in sequence mode: each input is up to 8 requests separated by
 * NUL bytes ("<op byte><body>\0<op byte><body>…"), run in order against the baseline
 * database recreated before every input. Slower than fuzz_call, but it reaches states
 * that need several requests (an index created, then written, then queried), and every
 * crash it finds reproduces from its input alone. The harness itself is fuzz_call.c. */
#define FUZZ_SEQUENCE 8
#include "fuzz_call.c"
