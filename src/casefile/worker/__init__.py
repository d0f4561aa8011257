"""What the background workers share, and nothing of what they do: the restart loop
(`supervisor`), the wake-ups and the wait between claims (`wakeup`), and rows claimed with a lease
(`lease`). Each worker lives in its domain package (the delivery worker with the webhooks, the AI
worker with the AI jobs); `casefile.background` starts them. This package imports neither.
"""
