"""python -m lessonkit: the same as the lessonkit command."""

from lessonkit.command import console

console()
