/* cli.h — the subcommands of the quarry program, one file each under src/cli/.
 *
 * Each subcommand is a function taking the arguments after its name and returning the
 * process exit status. Subcommands use only the public API (quarry.h) and their own
 * layer's interface (the server, the model checker). */
#ifndef QR_CLI_H
#define QR_CLI_H

int cli_call(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_model(int argc, char **argv);

#endif
