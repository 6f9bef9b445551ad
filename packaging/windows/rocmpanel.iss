; Inno Setup 6 script: the Windows installer of the one-folder build.
;
;   py -3.11 packaging\build.py                                  (makes dist\rocmpanel\)
;   iscc packaging\windows\rocmpanel.iss                         (makes dist\rocmpanel-0.1.0-setup.exe)
;   iscc /DAppVersion=0.2.0 packaging\windows\rocmpanel.iss      (another version)
;
; A per-user install by default (no administrator rights: {autopf} is then
; %LOCALAPPDATA%\Programs); the wizard offers an all-users install to administrators.
; The Start-menu shortcut starts rocmpanel-gui.exe (no console window) with the panel's
; AppUserModelID (rocmpanel/shell/app.py APP_USER_MODEL_ID), so the taskbar groups the
; running window under the shortcut. The uninstaller removes the program folder and the
; shortcuts; the user's settings and environments (%LOCALAPPDATA%\rocmpanel) stay.
; Names here must match packaging/rocmpanel.spec: tests/packaging/test_windows_installer.py
; checks that they do.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "rocmpanel"
#define AppExe "rocmpanel-gui.exe"
#define CliExe "rocmpanel.exe"
#define AppUserModelID "rocmpanel.rocmpanel.Panel"
#define BundleDir "..\..\dist\rocmpanel"

[Setup]
; The AppId ties upgrades and the uninstaller to one entry: never change it.
AppId={{0A30F598-84D3-52E4-B12F-3453BBAEC982}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=The rocmpanel developers
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename={#AppName}-{#AppVersion}-setup
SetupIconFile=..\..\resources\icons\rocmpanel.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#BundleDir}\{#CliExe}"; DestDir: "{app}"; Flags: ignoreversion
Source: "{#BundleDir}\{#AppExe}"; DestDir: "{app}"; Flags: ignoreversion
Source: "{#BundleDir}\_internal\*"; DestDir: "{app}\_internal"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"; AppUserModelID: "{#AppUserModelID}"
Name: "{group}\{cm:UninstallProgram,{#AppName}}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; AppUserModelID: "{#AppUserModelID}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Files the installer did not copy but the program folder may hold (none are written there
; by the panel today; this keeps an upgrade's leftovers from blocking the folder's removal).
Type: filesandordirs; Name: "{app}\_internal"
