#include <cstdio>

#include "seismo/app/command.h"

int main(int argc, char** argv) {
#ifdef SEISMO_PARSE_NEEDS_AVX2
  // The parse stage is built for SEISMO_PARSE_ARCH (AVX2 and PCLMUL, ADR 0001): on a CPU
  // without them it would stop on an illegal instruction at the first document.
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("pclmul")) {
    std::fprintf(stderr,
                 "seismo: this build's parse stage needs a CPU with AVX2 and PCLMUL (-march=%s); "
                 "build with cmake -DSEISMO_PARSE_ARCH='' for this one\n",
                 SEISMO_PARSE_NEEDS_AVX2);
    return 1;
  }
#endif
  return seismo::RunCli(argc, argv);
}
