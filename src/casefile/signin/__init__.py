"""The sign-in endpoints: password login, refresh, logout and single sign-on. The rules are
`casefile.auth`'s; this package is their HTTP surface, above `users` (whose `UserOut` a login
answers with)."""
