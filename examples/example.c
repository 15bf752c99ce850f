/*
 * example.c - libgpumerge in a few lines: a sort and a three-way merge on host
 * memory, on the device GM_DEVICE_AUTO chooses (the CPU for arrays this small).
 *
 *   cc example.c $(pkg-config --cflags --libs gpumerge) && ./a.out
 */
#include <gpumerge.h>
#include <stdio.h>

static void print(const char *what, const int32_t *k, size_t n)
{
    printf("%s:", what);
    for (size_t i = 0; i < n; i++)
        printf(" %d", (int)k[i]);
    printf("\n");
}

int main(void)
{
    gm_status st;
    int32_t keys[] = { 42, 3, -7, 3, 0 };
    if (gm_sort(keys, 5, GM_I32, NULL, NULL, &st) != GM_OK) {
        fprintf(stderr, "example: %s\n", st.msg);
        return 1;
    }
    print("sorted", keys, 5);

    static const int32_t a[] = { 1, 4, 7 }, b[] = { 2, 5, 8 }, c[] = { 3, 6, 9 };
    const void *arrays[] = { a, b, c };
    size_t lens[] = { 3, 3, 3 }, n;
    int32_t out[9];
    gm_options opt = { 0 };
    opt.device = GM_DEVICE_CPU; /* GM_DEVICE_GPU: on the GPU, or GM_ENODEV */
    opt.threads = 2;
    if (gm_merge(arrays, lens, 3, GM_I32, out, &opt, &n, &st) != GM_OK) {
        fprintf(stderr, "example: %s\n", st.msg);
        return 1;
    }
    print("merged", out, n);
    return 0;
}
