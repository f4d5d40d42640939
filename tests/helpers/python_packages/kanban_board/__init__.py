# A Hermes-shaped board package (our own code, test_python.c): installed the
# way pip installs hermes-agent, under <venv>/lib/python3.X/site-packages.
