/*
 * unique.cu - -u on the device: the first of each run of equal sorted keys kept
 * (cub::DeviceSelect::Unique), for the sort (sort.cu), the merge (merge.cu) and the
 * text path (text.cu) alike, below all three.
 */
#include <cub/device/device_select.cuh>

#include "device.cuh"
#include "kernels.cuh"

template <typename K>
int unique_on_device(const K *sorted, K *to, int64_t n, int64_t *d_count, device_buffers &mem,
                     int64_t *n_out, cudaStream_t s, gm_status *st)
{
    size_t temp_bytes = 0;
    GM_CUDA(cub::DeviceSelect::Unique(nullptr, temp_bytes, sorted, to, d_count, n, s), st);
    unsigned char *temp = nullptr;
    int rc = mem.alloc(&temp, temp_bytes, st);
    if (rc)
        return rc;
    GM_CUDA(cub::DeviceSelect::Unique(temp, temp_bytes, sorted, to, d_count, n, s), st);
    GM_CUDA(cudaMemcpyAsync(n_out, d_count, sizeof *n_out, cudaMemcpyDeviceToHost, s), st);
    GM_CUDA(cudaStreamSynchronize(s), st);
    return GM_OK;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int unique_on_device<K>(const K *, K *, int64_t, int64_t *, device_buffers &,  \
                                     int64_t *, cudaStream_t, gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
