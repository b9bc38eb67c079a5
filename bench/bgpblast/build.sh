#!/bin/sh
# Builds bgpblast next to this script: libc + pthreads only, nothing of the project.
cd "$(dirname "$0")" && exec gcc -std=gnu11 -O2 -g -Wall -Wextra -pthread -o bgpblast main.c session.c encode.c routes.c mrt.c monitor.c pfxset.c json.c prop.c prop_rx.c prop_stats.c -lm "$@"
