// The size probe's skeleton without the runtime: what any C++ program costs.
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (f == nullptr) return 1;
  fclose(f);
  printf("loaded\n");
  return 0;
}
