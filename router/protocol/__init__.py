"""Wire types of the API surfaces the gateway speaks; each translates into the same internal step."""
