// The bundled example module of nodelet's standalone mode: greets, shows its
// arguments and environment, ticks three times, and exits 0.
// Rebuild: clang --target=wasm32-wasi -O2 -o hello.wasm hello.c
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  printf("Hello from WebAssembly on nodelet!\n");
  for (int i = 1; i < argc; i++) printf("arg[%d] = %s\n", i, argv[i]);
  const char *greeting = getenv("GREETING");
  if (greeting) printf("GREETING = %s\n", greeting);
  for (int i = 1; i <= 3; i++) {
    printf("tick %d\n", i);
    fflush(stdout);
    sleep(1);
  }
  printf("done\n");
  return 0;
}
