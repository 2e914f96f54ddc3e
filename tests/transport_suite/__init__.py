"""The suite every upstream transport must pass: a hostile upstream (hostile.py) scripted per
request, and the transports it holds to it (transports.py). Add a new transport to
`TRANSPORTS` and it runs the whole suite."""
