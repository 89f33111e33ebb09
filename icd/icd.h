/* The cl_khr_icd glue: the dispatch table every Aquila object points to. */
#ifndef AQUILA_ICD_H
#define AQUILA_ICD_H

#include <CL/cl_icd.h>

void icd_fill_interop_slots(cl_icd_dispatch *table);
void icd_fill_opencl2_slots(cl_icd_dispatch *table);

#endif
