/* What every target does before its first input (linked into each of them). */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1); /* the server's start-up order: a fixed hash seed before any object */
	return 0;
}
