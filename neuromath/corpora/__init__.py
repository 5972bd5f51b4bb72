"""The public corpora neuromath fetches in one command (``neuromath data get``).

``catalogue``: each corpus's folder under the data root, source, licence, size and files (upstream URL, sha256 or
None when unvouched, path). ``download``: resumable ``.part`` downloads, sha256-checked before an atomic rename.
``unpack``: a checked tar archive, refusing members outside its folder or not plain files/folders. Standard library
only.
"""
