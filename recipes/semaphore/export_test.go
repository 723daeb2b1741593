package semaphore

// SetSpeculateHook arms a hook called with each speculative lease node
// once made (speculate.go; nil disarms).
func SetSpeculateHook(fn func(node string)) { speculateHook = fn }
