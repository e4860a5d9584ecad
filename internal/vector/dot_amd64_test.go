//go:build amd64 && !purego

package vector

import "golang.org/x/sys/cpu"

type kernel = func(u []int16, codes []int8, stride int, out []int32)

// kernels are the int8 kernels this machine can run, by name.
func kernels() map[string]kernel {
	ks := map[string]kernel{"dispatch": dotsInt8, "generic": dotsInt8Generic}
	if cpu.X86.HasAVX2 {
		ks["avx2"] = func(u []int16, codes []int8, stride int, out []int32) {
			dotsInt8AVX2(&u[0], &codes[0], stride, len(out), &out[0])
		}
	}
	if cpu.X86.HasAVX512BW && cpu.X86.HasAVX512F {
		ks["avx512"] = func(u []int16, codes []int8, stride int, out []int32) {
			dotsInt8AVX512(&u[0], &codes[0], stride, len(out), &out[0])
		}
	}
	return ks
}
