/* bench/drvstate_probe.cu -- does a driver state the shim creates make
 * cudaGraphInstantiate slower? Instantiates chains of 66..105 kernels,
 * median per variant, four rounds (round 0 warms up): the old exec destroyed
 * first or still alive, an extra exec alive (the application's own, kept
 * under a rewrite), the previous graph kept alive, relaxed capture mode
 * around the call, all of those, and the shim's summary walk of the graph
 * (nodes, types, edges) just before the instantiation.
 *   nvcc -O2 -arch=sm_90 -Ikernels -o drvstate_probe bench/drvstate_probe.cu -lcuda */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "scenario.h"
static double now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e9+t.tv_nsec;}
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static cudaGraph_t chain(cudaStream_t s, float *buf, int n){cudaGraph_t g; cudaStreamBeginCapture(s,cudaStreamCaptureModeGlobal); for(int i=0;i<n;i++) LAUNCH_ADD(s,buf,1024L,1.0); cudaStreamEndCapture(s,&g); return g;}
int main(){
  cudaStream_t s; float *buf; cudaFree(0); cudaStreamCreate(&s); cudaMalloc((void**)&buf, 1<<20);
  const char *names[]={"destroy-first","alive","alive+E0","alive+prevgraph","alive+relaxed","all","destroy-first+walk","alive+walk"};
  for (int round=0; round<4; round++) for (int v=0; v<8; v++){
    double t[40]; cudaGraphExec_t f=NULL, e0=NULL; cudaGraph_t prev=NULL, g0=NULL;
    if (v==2||v==5){ g0=chain(s,buf,64); cudaGraphInstantiate(&e0,g0,0);}
    for(int r=0;r<40;r++){
      cudaGraph_t gc=chain(s,buf,66+r); cudaGraphExec_t f2=NULL;
      if ((v==0||v==6) && f){ cudaGraphExecDestroy(f); f=NULL; }
      if (v==6||v==7){ /* the shim's summary walk */
        CUgraphNode nodes[256], from[512], to[512]; size_t n=256, ne=0; CUgraphNodeType ty;
        cuGraphGetNodes((CUgraph)gc, NULL, &n); n=256; cuGraphGetNodes((CUgraph)gc, nodes, &n);
        for (size_t i=0;i<n;i++) cuGraphNodeGetType(nodes[i], &ty);
        cuGraphGetEdges((CUgraph)gc, NULL, NULL, NULL, &ne); if (ne>512) ne=512; cuGraphGetEdges((CUgraph)gc, from, to, NULL, &ne);
      }
      CUstreamCaptureMode m=CU_STREAM_CAPTURE_MODE_RELAXED;
      double a=now();
      if (v==4||v==5) cuThreadExchangeStreamCaptureMode(&m);
      cudaGraphInstantiate(&f2,gc,0);
      if (v==4||v==5) cuThreadExchangeStreamCaptureMode(&m);
      t[r]=now()-a;
      if (f) cudaGraphExecDestroy(f);
      f=f2;
      if (v==3||v==5){ if(prev) cudaGraphDestroy(prev); prev=gc; } else cudaGraphDestroy(gc);
    }
    if(f) cudaGraphExecDestroy(f); if(prev) cudaGraphDestroy(prev); if(e0){cudaGraphExecDestroy(e0); cudaGraphDestroy(g0);}
    qsort(t,40,sizeof(double),cmpd); printf("round %d %-16s %.0f ns\n", round, names[v], t[20]);
  }
  return 0;}
