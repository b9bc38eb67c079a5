/*
 * DOC: birdcl, the plain control socket client
 *
 * No readline and no terminal handling: commands are read from stdin with
 * fgets, one per line, and a command is read only after the reply of the
 * previous one has ended, so `printf 'cmd1\ncmd2\n' | birdcl` works. As
 * BIRD's birdcl does, it prints the "bird> " prompt before each command and,
 * when stdin is not a terminal, echoes the command after it; a line ending
 * in '?' prints help instead of being sent. The plain front end itself lives
 * in client.c because birdc falls back to it when stdin is not a terminal.
 */
#include "client/client.h"

int main(int argc, char **argv)
{
  client_main(argc, argv, &client_plain_ui);
}
