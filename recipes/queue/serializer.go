package queue

// Serializer turns a queue's items into bytes and back (Curator's
// QueueSerializer). Unlike Curator's, both directions may fail: a
// Deserialize error makes the item corrupt (WithOnError, wrapping
// curator.ErrCorrupt).
type Serializer[T any] interface {
	Serialize(item T) ([]byte, error)
	Deserialize(data []byte) (T, error)
}

// Bytes is the Serializer of []byte items: the bytes as they are.
type Bytes struct{}

// Serialize implements Serializer.
func (Bytes) Serialize(item []byte) ([]byte, error) { return item, nil }

// Deserialize implements Serializer (the result is a copy).
func (Bytes) Deserialize(data []byte) ([]byte, error) { return append([]byte{}, data...), nil }

// String is the Serializer of string items: their UTF-8 bytes, as Java's
// new String(bytes, UTF_8) and String.getBytes(UTF_8).
type String struct{}

// Serialize implements Serializer.
func (String) Serialize(item string) ([]byte, error) { return []byte(item), nil }

// Deserialize implements Serializer.
func (String) Deserialize(data []byte) (string, error) { return string(data), nil }

// Funcs is a Serializer made of two functions.
type Funcs[T any] struct {
	Ser   func(T) ([]byte, error)
	Deser func([]byte) (T, error)
}

// Serialize implements Serializer.
func (f Funcs[T]) Serialize(item T) ([]byte, error) { return f.Ser(item) }

// Deserialize implements Serializer.
func (f Funcs[T]) Deserialize(data []byte) (T, error) { return f.Deser(data) }
