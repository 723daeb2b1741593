package framework

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// ProtectedPrefix starts the name of every node made with WithProtection:
// "_c_" + a 36-character UUID + "-" + the name asked for, exactly as
// Curator's protected mode names nodes, so Curator and gocurator clients
// recognise each other's nodes.
const ProtectedPrefix = "_c_"

const protectedIDLen = 36

// protectedHeadLen is len("_c_") + 36 + len("-").
const protectedHeadLen = len(ProtectedPrefix) + protectedIDLen + 1

// NewProtectedID returns a random UUID (version 4, 36 characters) for a
// protected name.
func NewProtectedID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("framework: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// ProtectedName returns the protected form of name for id.
func ProtectedName(id, name string) string { return ProtectedPrefix + id + "-" + name }

// IsProtected reports whether a node name carries a protection prefix:
// "_c_", a UUID (8-4-4-4-12 hex digits), "-", and a non-empty rest
// (Curator's ProtectedUtils.isProtectedZNode). A name that merely starts
// with "_c_" is not protected.
func IsProtected(name string) bool {
	return len(name) > protectedHeadLen && strings.HasPrefix(name, ProtectedPrefix) &&
		name[protectedHeadLen-1] == '-' && isUUID(name[len(ProtectedPrefix):protectedHeadLen-1])
}

// isUUID reports whether s is 36 characters of hex digits in groups of
// 8-4-4-4-12, as java.util.UUID prints one.
func isUUID(s string) bool {
	if len(s) != protectedIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ProtectedID returns the UUID of a protected node name, if it has one
// (Curator's ProtectedUtils.extractProtectedId).
func ProtectedID(name string) (string, bool) {
	if !IsProtected(name) {
		return "", false
	}
	return name[len(ProtectedPrefix) : protectedHeadLen-1], true
}

// NormalizeName strips a protection prefix from a node name, if any
// (Curator's ProtectedUtils.normalize).
func NormalizeName(name string) string {
	if IsProtected(name) {
		return name[protectedHeadLen:]
	}
	return name
}
