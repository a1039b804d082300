/* Big-endian reads and writes of PostgreSQL's binary format, and numeric decoding. */
#ifndef QAIL_BENCH_WIRE_H
#define QAIL_BENCH_WIRE_H

#include <stdint.h>

static uint16_t get16(const char *p) {
    const unsigned char *u = (const unsigned char *)p;
    return (uint16_t)((u[0] << 8) | u[1]);
}
static uint32_t get32(const char *p) {
    const unsigned char *u = (const unsigned char *)p;
    return ((uint32_t)u[0] << 24) | ((uint32_t)u[1] << 16) | ((uint32_t)u[2] << 8) | u[3];
}
static uint64_t get64(const char *p) { return ((uint64_t)get32(p) << 32) | get32(p + 4); }
static void put32(char *p, uint32_t v) {
    p[0] = (char)(v >> 24); p[1] = (char)(v >> 16); p[2] = (char)(v >> 8); p[3] = (char)v;
}
static void put64(char *p, uint64_t v) { put32(p, (uint32_t)(v >> 32)); put32(p + 4, (uint32_t)v); }

/* numeric (binary) → value × 10^2 as int64; enough for numeric(10,2) and numeric(12,2). */
static int64_t numeric_cents(const char *p) {
    int16_t ndigits = (int16_t)get16(p), weight = (int16_t)get16(p + 2);
    uint16_t sign = get16(p + 4);
    int64_t mant = 0;
    for (int i = 0; i < ndigits; i++) mant = mant * 10000 + get16(p + 8 + 2 * i);
    int exp = weight - (ndigits - 1); /* in base-10000 digits */
    mant *= 100;
    for (; exp > 0; exp--) mant *= 10000;
    for (; exp < 0; exp++) mant /= 10000;
    return sign == 0x4000 ? -mant : mant;
}

#endif
