package atomic

// SetWriteHook arms a hook run before each conditional write or create
// (nil disarms).
func SetWriteHook(fn func(path string)) { writeHook = fn }
