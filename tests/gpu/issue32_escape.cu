// tests/gpu/issue32_escape.cu -- work that escapes a capture, on a GPU
// (issue 32, tests/gpu/issue32.py). A non-blocking stream s captures a
// kernel adding 1 to a; a second kernel adding 10 to b goes, per mode, to:
//   cached   a stream created before the capture          (CGS024 other_stream)
//   legacy   the legacy stream, 0                          (CGS024 legacy_stream)
//   ptds     cudaStreamPerThread                           (CGS024 per_thread_stream)
//   empty    only the escaped kernel, none on s            (CGS024 + CGS025)
//   joined   a stream joined by an event wait              (silent)
//   thread   another thread's own stream, during the capture (silent)
// The graph is replayed 3 times; prints "a A b B nodes N": the escaped
// kernel ran once (b 10), the joined one 3 times (b 30).
#include <cstdio>
#include <cstring>
#include <thread>

#include <cuda_runtime.h>

#include "issue32_ck.h"

__global__ void add(float *p, float v)
{
	p[threadIdx.x] += v;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "cached";
	cudaStream_t s, other;
	cudaEvent_t fork, join;
	cudaGraph_t g;
	cudaGraphExec_t e;
	float *a, *b, ha = 0, hb = 0;
	size_t nodes = 0;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking)); // cached before the capture
	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
	CK(cudaMalloc(&a, 32 * sizeof(float)));
	CK(cudaMalloc(&b, 32 * sizeof(float)));
	CK(cudaMemset(a, 0, 32 * sizeof(float)));
	CK(cudaMemset(b, 0, 32 * sizeof(float)));
	CK(cudaDeviceSynchronize());

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	if (std::strcmp(mode, "empty"))
		add<<<1, 32, 0, s>>>(a, 1.0f);
	if (!std::strcmp(mode, "cached") || !std::strcmp(mode, "empty"))
		add<<<1, 32, 0, other>>>(b, 10.0f);
	else if (!std::strcmp(mode, "legacy"))
		add<<<1, 32, 0, 0>>>(b, 10.0f);
	else if (!std::strcmp(mode, "ptds"))
		add<<<1, 32, 0, cudaStreamPerThread>>>(b, 10.0f);
	else if (!std::strcmp(mode, "joined")) {
		CK(cudaEventRecord(fork, s));
		CK(cudaStreamWaitEvent(other, fork, 0));
		add<<<1, 32, 0, other>>>(b, 10.0f);
		CK(cudaEventRecord(join, other));
		CK(cudaStreamWaitEvent(s, join, 0));
	} else if (!std::strcmp(mode, "thread")) {
		cudaStream_t mine;
		CK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking)); // before: creation is fine in global mode
		std::thread t([&] { add<<<1, 32, 0, mine>>>(b, 10.0f); });
		t.join();
	}
	CK(cudaGetLastError());
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphGetNodes(g, nullptr, &nodes));
	CK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < 3; i++)
		CK(cudaGraphLaunch(e, s));
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&ha, a, sizeof ha, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&hb, b, sizeof hb, cudaMemcpyDeviceToHost));
	std::printf("a %g b %g nodes %zu\n", ha, hb, nodes);
	return 0;
}
