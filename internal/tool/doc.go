// Package tool defines what a tool is ([Tool], [Spec], [Result]), the set of tools a session
// offers ([Set]), and strict validation of the arguments a model sends ([Validate]).
//
// The built-in tools live in subpackages: fstool (read, write, edit, ls, find), grep, and shell
// (bash). All file access goes through an [os.Root] workspace so that no path — relative,
// absolute, with "..", or through a symlink — reaches outside it.
package tool
