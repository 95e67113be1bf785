"""The playground: a page that shows what the webhook would do to a VM (`serve --dev`, `playground`).

Pure parts: `yamlpos` (YAML text -> object, and where each field starts), `sidebyside` (line diff rows).
The edge: `engine` runs the VM through the same handlers as /mutate, /validate and /preview; `routes`
serves the page (assets in `static/`, samples in `samples/`, all package data) and its JSON API.
"""
