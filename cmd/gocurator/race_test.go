//go:build race

package main_test

// raceEnabled: the tests run with -race, and so does the binary they build.
const raceEnabled = true
