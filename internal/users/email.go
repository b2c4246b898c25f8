package users

import "strings"

// EmailKey is the form of an email that uniqueness is checked on: emails
// differing only in case belong to one user.
func EmailKey(email string) string { return strings.ToLower(email) }
