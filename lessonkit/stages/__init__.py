"""The stages' bodies, each in its module; lessonkit/pipeline.py runs them in order."""
