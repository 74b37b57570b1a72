"""``python -m sparkwin jar``: the path of the jar inside the installed package, for
``spark-submit --jars`` and other launchers that take jars before Python runs.

Example::

    spark-submit --master spark://host:7077 --jars "$(python -m sparkwin jar)" job.py
"""

from __future__ import annotations

import sys

from sparkwin._spark.jar import jarPath


def main(argv: list[str]) -> int:
    """Print what the command asks for; 2 and a usage line for anything else."""
    if argv != ["jar"]:
        print("usage: python -m sparkwin jar   (prints the sparkwin jar's path)", file=sys.stderr)
        return 2
    print(jarPath())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
