// Package wholefiletest counts the saves wholefile.Replace makes of a
// file, for tests that a state file is not written more often than it
// needs (Saves, Linux only).
package wholefiletest
