package semaphore

// SetStartHook arms a hook that SharedCount.Start calls once its first read
// is done, just before it starts watching (nil disarms).
func SetStartHook(fn func(*SharedCount)) { startHook = fn }

// EncodeCount and DecodeCount are Curator's SharedCount format.
var (
	EncodeCount = encodeCount
	DecodeCount = decodeCount
)

// SetSpeculateHook arms a hook called with each speculative lease node
// once made (speculate.go; nil disarms).
func SetSpeculateHook(fn func(node string)) { speculateHook = fn }
