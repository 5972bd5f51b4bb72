"""The public corpora neuromath fetches in one command (``neuromath data get``).

``catalogue`` names each corpus: its folder under the data root, source, licence, size and files, each file with its
upstream URL, its sha256 (None where no one has vouched for the bytes) and its path under the data root.
``download`` fetches them: resumable downloads into ``.part`` files, each checked against its sha256 before an
atomic rename puts it in place. ``unpack`` unpacks a checked tar archive, refusing any member that would land outside
its folder or is not a plain file or folder. Standard library only: no torch, no new dependency.
"""
