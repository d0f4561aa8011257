"""What the tests share: servers on real databases (`servers`), checks of the API's answers
(`assertions`), data to send (`factories`), a webhook receiver (`receivers`), `casefile` child
processes (`processes`), search passages (`indexing`) and an OpenID provider (`oidc`). The
fixtures are in `plugin`, which tests/conftest.py loads; the tests import the helpers."""
