#include "seismo/app/command.h"

int main(int argc, char** argv) { return seismo::RunCli(argc, argv); }
