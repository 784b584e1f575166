// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loops over every integer and floating type for gcc to vectorise with AVX-512 (built with
 * -O3 -march=sapphirerapids -mprefer-vector-width=512): masked, broadcast, gathered, converted
 * and compressed EVEX code with RIP-relative constants, for test_entrycheck's decoder oracle.
 * Never run.
 */
#include <stddef.h>
#include <stdint.h>

#define LOOPS(T, N)                                                                               \
	void N##_axpy(T *restrict y, const T *restrict x, T a, size_t n)                          \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = a * x[i] + y[i];                                                    \
	}                                                                                          \
	T N##_sum(const T *x, size_t n)                                                            \
	{                                                                                          \
		T s = 0;                                                                           \
		for (size_t i = 0; i < n; i++)                                                     \
			s += x[i];                                                                 \
		return s;                                                                          \
	}                                                                                          \
	T N##_max(const T *x, size_t n)                                                            \
	{                                                                                          \
		T m = x[0];                                                                        \
		for (size_t i = 1; i < n; i++)                                                     \
			m = x[i] > m ? x[i] : m;                                                   \
		return m;                                                                          \
	}                                                                                          \
	void N##_select(T *restrict y, const T *restrict x, const T *restrict z, size_t n)         \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = x[i] < z[i] ? x[i] * 3 : z[i] - 7;                                  \
	}                                                                                          \
	void N##_gather(T *restrict y, const T *restrict x, const int32_t *restrict idx, size_t n) \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = x[idx[i]];                                                          \
	}                                                                                          \
	size_t N##_compress(T *restrict y, const T *restrict x, size_t n)                          \
	{                                                                                          \
		size_t k = 0;                                                                      \
		for (size_t i = 0; i < n; i++)                                                     \
			if (x[i] > 0)                                                              \
				y[k++] = x[i];                                                     \
		return k;                                                                          \
	}                                                                                          \
	void N##_to_double(double *restrict y, const T *restrict x, size_t n)                     \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = (double)x[i] * 0.5;                                                 \
	}                                                                                          \
	void N##_poly(T *restrict y, const T *restrict x, size_t n)                                \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = ((x[i] * 5 + 3) * x[i] + 11) * x[i] + (T)17;                        \
	}                                                                                          \
	void N##_minabs(T *restrict y, const T *restrict x, const T *restrict z, size_t n)         \
	{                                                                                          \
		for (size_t i = 0; i < n; i++) {                                                   \
			T a = x[i] < 0 ? -x[i] : x[i];                                             \
			y[i] = a < z[i] ? a : z[i];                                                \
		}                                                                                  \
	}                                                                                          \
	void N##_div(T *restrict y, const T *restrict x, size_t n)                                 \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = x[i] / (T)7 + x[i] / (T)3;                                          \
	}                                                                                          \
	void N##_strided(T *restrict y, const T *restrict x, size_t n)                             \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = x[2 * i] + x[2 * i + 1] * x[3 * i];                                 \
	}

LOOPS(int8_t, i8)
LOOPS(uint8_t, u8)
LOOPS(int16_t, i16)
LOOPS(uint16_t, u16)
LOOPS(int32_t, i32)
LOOPS(uint32_t, u32)
LOOPS(int64_t, i64)
LOOPS(uint64_t, u64)
LOOPS(float, f32)
LOOPS(double, f64)
LOOPS(_Float16, f16)

#define BITS(T, N)                                                                                \
	void N##_bits(T *restrict y, const T *restrict x, const T *restrict z, size_t n)           \
	{                                                                                          \
		for (size_t i = 0; i < n; i++)                                                     \
			y[i] = ((x[i] << 3) ^ (z[i] >> 2)) & ~(x[i] | (T)__builtin_popcountll(z[i])); \
	}

BITS(uint8_t, u8)
BITS(uint16_t, u16)
BITS(uint32_t, u32)
BITS(uint64_t, u64)
BITS(int32_t, i32)
BITS(int64_t, i64)
