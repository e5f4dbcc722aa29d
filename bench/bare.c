/*
 * The ceiling of the architecture: a bare FastCGI program that answers every request with a fixed
 * JSON body, with none of Blockport's work (no parsing, auth, limits or routing). bench/platform.sh
 * serves it through the same lighttpd as Blockport.
 */
#include <fcgiapp.h>

int	main(void);

int
main(void)
{
	static const char resp[] = "Status: 404 Not Found\r\nContent-Type: application/json\r\n"
	    "Content-Length: 72\r\n\r\n"
	    "{\"error\":{\"code\":\"not_found\",\"message\":\"no such endpoint\",\"status\":404}}";
	FCGX_Request r;

	if (FCGX_Init() != 0 || FCGX_InitRequest(&r, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&r) >= 0) {
		FCGX_PutStr(resp, sizeof(resp) - 1, r.out);
		FCGX_Finish_r(&r);
	}
	return 0;
}
