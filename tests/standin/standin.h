/*
 * tests/standin/standin.h -- public conventions of the CPU stand-in driver.
 *
 * The stand-in libcuda.so.1 (tests/standin/driver.c) is a TEST DOUBLE used by
 * CI, which has no GPU. It is never installed. Test programs include this
 * header to write "kernels" that the stand-in can run.
 *
 * Kernels
 *   A CUfunction in the stand-in is the address of a host function of type
 *   standin_kernel_fn. cuLaunchKernel / cudaLaunchKernel / a kernel graph node
 *   call it with the kernel parameter array and the total thread count
 *   gridX*gridY*gridZ*blockX*blockY*blockZ.
 *
 *   CONVENTION: every kernel parameter is exactly 8 bytes wide (pointers,
 *   long, double, ...), and the parameter array is NULL-terminated: the
 *   number of parameters is found by walking kernelParams to the first NULL
 *   entry. This is what lets a kernel node copy its parameters by value at
 *   node creation and replay them at every graph launch. At most
 *   STANDIN_MAX_KERNEL_PARAMS parameters.
 *
 * Device memory
 *   Device pointers are ordinary host addresses (calloc'd), so a kernel reads
 *   and writes them directly and host code may dereference them too.
 *
 * Execution
 *   Everything runs synchronously when issued (or, for graphs, when
 *   launched); streams are handles only.
 */
#ifndef CGSHIM_STANDIN_H
#define CGSHIM_STANDIN_H

#define STANDIN_MAX_KERNEL_PARAMS 32

typedef void (*standin_kernel_fn)(void **params, unsigned long nthreads);

/* Read parameter i of a kernel as type T (T must be 8 bytes wide). */
#define STANDIN_ARG(params, i, T) (*(T *)(params)[i])

#endif
