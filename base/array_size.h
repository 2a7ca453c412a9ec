/* The number of elements of an array (not of a pointer). */
#ifndef HAVEN_ARRAY_SIZE_H
#define HAVEN_ARRAY_SIZE_H
#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))
#endif
