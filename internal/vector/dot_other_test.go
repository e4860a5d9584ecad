//go:build !amd64 || purego

package vector

type kernel = func(u []int16, codes []int8, stride int, out []int32)

// kernels are the int8 kernels this machine can run, by name.
func kernels() map[string]kernel {
	return map[string]kernel{"dispatch": dotsInt8, "generic": dotsInt8Generic}
}
